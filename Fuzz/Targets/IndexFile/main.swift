import FuzzSupport

FuzzDriver.run(FuzzTests.indexFile)
