"""Layer 3, the call: the session (the composition root) and its owners: input path, turn
taking, responder and responses, call control, client control, the tool desk.
`pipeline/bargein.py` belongs to this layer and stays where the design card puts it."""
