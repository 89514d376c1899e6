"""Scripted fakes of outside services that speak the real wire formats over HTTP."""
