from forgec.cli import main

main()
