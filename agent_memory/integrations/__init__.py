"""Adapters to agent frameworks (surfaces over ``agent_memory.Memory``); each imports its framework."""
