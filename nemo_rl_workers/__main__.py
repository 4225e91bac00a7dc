from nemo_rl_workers.commands.cli import main

raise SystemExit(main())
