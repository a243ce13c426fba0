"""The ground floor: settings, records, errors, text and token helpers, the embedding and LLM clients.

Everything above imports these; they import nothing of the package above them."""
