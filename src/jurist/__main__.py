from jurist.cli import main

if __name__ == "__main__":  # vLLM's --local workers are spawned and import the main module again
    main()
