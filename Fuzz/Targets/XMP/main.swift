import FuzzSupport

FuzzDriver.run(FuzzTests.xmp)
