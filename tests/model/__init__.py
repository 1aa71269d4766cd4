"""Tests of the app without a server: its model, views, query and state."""
