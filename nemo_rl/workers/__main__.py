from nemo_rl.workers.cli import main

raise SystemExit(main())
