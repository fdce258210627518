package csstress

import "strconv"

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
func itoa(i int64) string       { return strconv.FormatInt(i, 10) }
