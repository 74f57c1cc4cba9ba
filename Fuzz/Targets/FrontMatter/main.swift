import FuzzSupport

FuzzDriver.run(FuzzTests.frontMatter)
