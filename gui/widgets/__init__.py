"""Small reusable widgets: the safe markdown browser, the read-only badge."""
