"""Layer 5, the call: the session (the composition root) and its owners: input path, turn
taking, barge-in (`interruption`), responder and responses, call control, client control, the
tool desk. The barge-in gate itself is `pipeline/bargein.py`, a layer below, where the design
card puts it."""
