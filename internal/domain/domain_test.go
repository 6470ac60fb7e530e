package domain

import "testing"

func TestParseTaskID(t *testing.T) {
	tests := []struct {
		in      string
		want    TaskID
		wantErr string
	}{
		{"3", 3, ""},
		{" 3 ", 3, ""},
		{"12", 12, ""},
		{"0", 0, `task id "0" is not a positive integer`},
		{"-1", 0, `task id "-1" is not a positive integer`},
		{"+3", 0, `task id "+3" is not a positive integer`},
		{"3.0", 0, `task id "3.0" is not a positive integer`},
		{"x", 0, `task id "x" is not a positive integer`},
		{"", 0, `task id "" is not a positive integer`},
		{" ", 0, `task id " " is not a positive integer`},
		{"99999999999999999999999", 0, `task id "99999999999999999999999" is not a positive integer`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTaskID(tc.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tc.want || gotErr != tc.wantErr {
				t.Errorf("ParseTaskID(%q) = %d, %q; want %d, %q", tc.in, got, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

func TestTaskIDString(t *testing.T) {
	for id, want := range map[TaskID]string{0: "", -1: "", 3: "3", 12: "12"} {
		if got := id.String(); got != want {
			t.Errorf("TaskID(%d).String() = %q, want %q", int(id), got, want)
		}
	}
}
