from rc1.bench.main import main

raise SystemExit(main())
