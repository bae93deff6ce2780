// The interface definition language is a module of its own so that the build-time code
// generator (varlink-codegen, built for the host beside every build) needs nothing else; a
// user of VarlinkCore sees it as part of Varlink.
@_exported public import VarlinkIDL
