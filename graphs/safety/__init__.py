"""Safety: the rules that find danger, suicide risk and medical emergencies in every message,
before anything else reads it (`rules.py`, patterns in knowledge/safety.yaml)."""
