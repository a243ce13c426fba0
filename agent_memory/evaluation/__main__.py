import sys

from agent_memory.evaluation.cli import main

sys.exit(main())
