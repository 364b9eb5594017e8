"""Retrieval forensics: the query workbench (every ranking, term contributions, exclusions) and the usage
receipts browser with replay and drift."""
