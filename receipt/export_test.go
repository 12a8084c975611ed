package receipt

// ScanEffect exposes scanEffect to the differential tests.
var ScanEffect = scanEffect
