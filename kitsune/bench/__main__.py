import sys

from kitsune.bench.harness import main

sys.exit(main())
