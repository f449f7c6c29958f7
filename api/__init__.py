"""Radar's HTTP service: the agent (/chat, /chat/stream) and the read endpoints shared with the dashboard."""
