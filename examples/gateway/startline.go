package main

import "fmt"

// tempDirLine says what the temporary directory d holds, and so what is
// lost at exit: the database only when no -db or -postgres was given,
// else only the demo's files.
func tempDirLine(o options, d string) string {
	switch {
	case o.db == "" && o.postgres == "" && o.files == "":
		return fmt.Sprintf("data directory: %s (a demo database and files; removed at exit: give -db FILE to keep them)", d)
	case o.db == "" && o.postgres == "":
		return fmt.Sprintf("data directory: %s (a demo database; removed at exit: give -db FILE to keep it)", d)
	}
	return fmt.Sprintf("files directory: %s (the demo's q3.csv that file references resolve in; removed at exit; -files DIR names your own)", d)
}
