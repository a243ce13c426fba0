"""The errors a caller of the Python API catches are importable from ``agent_memory`` itself (a script
catching DataDirBusyError once had to know it lived in agent_memory.core.owner), lazily: importing the
package imports none of the layers above the core."""

from __future__ import annotations

import subprocess
import sys

import agent_memory
from agent_memory.core import errors, owner

ERRORS = ["AgentMemoryError", "BackupError", "BudgetError", "ClosedError", "ConfigError", "IndexFormatError", "IngestError",
          "LLMError", "NotFoundError", "SourceBusyError", "StoreError", "StoreUnavailableError", "DataDirBusyError"]


def test_every_public_error_is_exported_from_the_package_root():
    for name in ERRORS:
        assert name in agent_memory.__all__, name
        exported = getattr(agent_memory, name)
        assert exported is (getattr(owner, name) if name == "DataDirBusyError" else getattr(errors, name))
        assert issubclass(exported, agent_memory.AgentMemoryError)
    from agent_memory import ClosedError, DataDirBusyError  # noqa: F401 - the import is what is tested
    raised_on_purpose = {name for name, value in vars(errors).items()
                         if isinstance(value, type) and issubclass(value, errors.AgentMemoryError)}
    # Every error a call of Memory raises is there (InternalError, JobInterrupted and JobGivenUp stay inside the
    # server; SourceNotFoundError is the API's and the remote client's NotFoundError carrying similar IDs).
    assert raised_on_purpose - set(ERRORS) == {"DimensionMismatchError", "InternalError", "JobInterrupted",
                                               "JobGivenUp", "SourceNotFoundError"}
    assert issubclass(errors.SourceNotFoundError, errors.NotFoundError)


def test_every_name_in_all_resolves_and_importing_the_package_imports_no_upper_layer():
    for name in agent_memory.__all__:
        assert getattr(agent_memory, name) is not None, name
    code = ("import sys, agent_memory; from agent_memory import DataDirBusyError, ClosedError; "
            "print(sorted(m for m in sys.modules if m.startswith(('agent_memory.memory', 'agent_memory.retrieval', "
            "'agent_memory.ingest'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded
