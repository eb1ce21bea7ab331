"""Collection: run the probes on a host through a transport and return a Bundle."""
