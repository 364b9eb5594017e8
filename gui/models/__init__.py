"""Lazy Qt models: they hold ids only and build rows on the database worker when a view first shows them."""
