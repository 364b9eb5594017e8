"""Importers: turn conversations kept in other formats into StrataGate memory."""
