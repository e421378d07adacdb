"""Stand-in for τ²-bench's `tau2.data_model.message` (which pulls in its audio and utils modules): only the names
`tasks.py` imports. `ToolRequestor` is τ²'s own definition; `Message` and `ToolCall` matter only for a task's
`initial_state.message_history` and `Action.compare_with_tool_call`, which forgec's export does not use."""

from typing import Any, Literal

from pydantic import BaseModel

UserRole = Literal["user"]
AssistantRole = Literal["assistant"]
ToolRequestor = UserRole | AssistantRole


class ToolCall(BaseModel):
    id: str = ""
    name: str
    arguments: dict
    requestor: ToolRequestor = "assistant"


Message = dict[str, Any]
