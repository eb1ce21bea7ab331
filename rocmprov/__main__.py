from rocmprov.cli import main

raise SystemExit(main())
