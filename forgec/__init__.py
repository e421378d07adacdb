"""forgec: compile tool documentation into verifiable RL environments for tool-using agents."""

__version__ = "0.1.0"
