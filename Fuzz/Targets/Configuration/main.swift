import FuzzSupport

FuzzDriver.run(FuzzTests.configuration)
