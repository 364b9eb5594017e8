"""StrataGate Inspector: the PySide6 app. It adapts `stratagate` for people and owns no memory rules."""
