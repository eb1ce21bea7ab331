"""One host's audit: bundle -> facts -> checks -> HostReport (and the local collection that
feeds it)."""
