from rtc.cli import main

main()
