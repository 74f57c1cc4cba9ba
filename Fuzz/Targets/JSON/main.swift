import FuzzSupport

FuzzDriver.run(FuzzTests.json)
