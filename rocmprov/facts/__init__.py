"""Facts: a bundle's probe outputs -> typed HostFacts (through parse/), and the per-host firmware
and version inventory built from them. Pure: no command is run here."""
