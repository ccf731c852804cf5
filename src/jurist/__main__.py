from jurist.cli import main

main()
