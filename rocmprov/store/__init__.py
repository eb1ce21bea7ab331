"""Files rocmprov keeps on disk: private (0600 files in 0700 directories of this user), replaced
atomically, never written through a symbolic link."""
