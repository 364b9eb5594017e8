"""Retrieval primitives: the reference's tokenizer, BM25 and RRF, the weighted search fields of events and
element facts, ICU collation for tie-breaks, and an inverted index that ranks exactly like BM25."""
