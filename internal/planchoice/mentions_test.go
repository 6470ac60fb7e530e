package planchoice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMentions(t *testing.T) {
	known := map[string]bool{"auth": true, "auth-v2": true, "api": true, "web": true, "x": true}
	for _, tc := range []struct {
		name string
		tail string
		want []string
	}{
		{name: "plan directory path", tail: `{"file_path":"/repo/.taskie/plans/api/task-1.md"}`, want: []string{"api"}},
		{name: "--plan ID", tail: `{"command":"taskie status --plan api"}`, want: []string{"api"}},
		{name: "--plan=ID", tail: `taskie continue --plan=web --json`, want: []string{"web"}},
		{name: "plan new ID", tail: `taskie plan new auth`, want: []string{"auth"}},
		{name: "plan new with boolean flags first", tail: `taskie plan new --auto --tdd web`, want: []string{"web"}},
		{name: "an id is taken whole", tail: `--plan auth-v2 then plans/auth-v2/plan.md`, want: []string{"auth-v2"}},
		{name: "a prefix of a longer id is no mention", tail: `taskie plan new authx; --plan=auth_y`, want: nil},
		{name: "overlapping prefixes, both named", tail: `plans/auth-v2/ and later --plan auth`, want: []string{"auth-v2", "auth"}},
		{name: "an id at the very end", tail: `taskie status --plan auth`, want: []string{"auth"}},
		{name: "a plan directory without its slash is no mention", tail: `ls .taskie/plans/api`, want: nil},
		{name: "ordered by last occurrence", tail: `plans/api/ --plan web plans/api/x --plan=auth --plan web`, want: []string{"api", "auth", "web"}},
		{name: "unknown ids are ignored", tail: `--plan nope plans/other/ --plan api plan new zzz`, want: []string{"api"}},
		{name: "plan without its dashes is no flag", tail: `the plan api is done; -plan web`, want: nil},
		{name: "prose is not a mention", tail: `the plans/ folder; a plan new to us; --plan`, want: nil},
		{name: "a mention in last_assistant_message, appended by the caller", tail: "{\"cmd\":\"--plan api\"}\nNow run the review of .taskie/plans/web/.", want: []string{"api", "web"}},
		{name: "empty", tail: ``, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Mentions([]byte(tc.tail), func(id string) bool { return known[id] })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Mentions(%q) (-want +got):\n%s", tc.tail, diff)
			}
		})
	}
}

func TestMentionsAsksOncePerID(t *testing.T) {
	asked := map[string]int{}
	Mentions([]byte(`--plan a --plan b --plan a plans/a/ --plan b`), func(id string) bool {
		asked[id]++
		return id == "a"
	})
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1}, asked); diff != "" {
		t.Errorf("known calls (-want +got):\n%s", diff)
	}
}
