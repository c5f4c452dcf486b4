import sys

from rcqa.cli import main

sys.exit(main())
