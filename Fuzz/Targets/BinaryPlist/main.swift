import FuzzSupport

FuzzDriver.run(FuzzTests.binaryPlist)
