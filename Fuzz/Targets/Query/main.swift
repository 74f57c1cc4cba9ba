import FuzzSupport

FuzzDriver.run(FuzzTests.query)
