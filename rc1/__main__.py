from rc1.cli import main

raise SystemExit(main())
