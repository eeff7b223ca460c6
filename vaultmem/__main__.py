"""`python -m vaultmem` runs the CLI."""

from vaultmem.cli import main

if __name__ == "__main__":
    main()
