import FuzzSupport

FuzzDriver.run(FuzzTests.xmlPlist)
