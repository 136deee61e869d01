import sys

from crovia_spider.cli import main

sys.exit(main())
