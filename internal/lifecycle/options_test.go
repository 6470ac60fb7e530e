package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOptions(t *testing.T) {
	mv := func(s State) Option { return Option{ActMove, s} }
	act := func(a Action) Option { return Option{Action: a} }
	rb := func(s State) Option { return Option{ActRollback, s} }
	cases := []struct {
		name  string
		task  Task
		actor Actor
		want  []Option
	}{
		{"agent in quality_review: no abandon, no rollback", reach(t, QualityReview, ""), ActorAgent,
			[]Option{mv(Approved), mv(InProgress), act(ActFail), act(ActEscalate)}},
		{"hook in quality_review: no escalate", reach(t, QualityReview, ""), ActorHook,
			[]Option{mv(Approved), mv(InProgress), act(ActFail)}},
		{"human in planning", reach(t, Planning, ""), ActorHuman,
			[]Option{mv(Validated), mv(Planning), act(ActFail), rb(Assigned), rb(Pending), act(ActEscalate), act(ActAbandon)}},
		{"cto in cto_intervention from testing", reach(t, CTOIntervention, Testing), ActorCTO,
			[]Option{act(ActFail), act(ActRetry), rb(InProgress), rb(Validated), rb(Planning), rb(Assigned), rb(Pending), act(ActSkip), act(ActEscalate)}},
		{"agent in cto_intervention", reach(t, CTOIntervention, Testing), ActorAgent,
			[]Option{act(ActFail), act(ActEscalate)}},
		{"agent in human_escalation: nothing", reach(t, HumanEscalation, Testing), ActorAgent, nil},
		{"human in human_escalation", reach(t, HumanEscalation, Testing), ActorHuman,
			[]Option{act(ActResolve), act(ActAbandon)}},
		{"anyone in completed: nothing", reach(t, Completed, ""), ActorHuman, nil},
		{"unknown actor", reach(t, Testing, ""), "robot", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Options(tc.task, tc.actor)); diff != "" {
				t.Errorf("Options (-want +got):\n%s", diff)
			}
		})
	}
	if got := ActorsWithOptions(reach(t, HumanEscalation, Testing), ActorAgent); !cmp.Equal(got, []Actor{ActorHuman}) {
		t.Errorf("ActorsWithOptions(human_escalation) = %v, want [human]", got)
	}
}
