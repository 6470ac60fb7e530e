//go:build unix && !darwin

package main

func rssKB(v int64) int64 { return v }
