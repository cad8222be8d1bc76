package multimatch
import ("testing")
func TestZZStats(t *testing.T){
	pats := RealisticPatterns(10000, 1)
	as := make([]*Analysis, len(pats))
	insts, nl := 0, 0
	for i,p := range pats { a,_ := Analyze(p); as[i]=a; insts+=a.insts; for _,g:=range a.groups{nl+=len(g)}; nl+=len(a.anchor)}
	s := Build(as)
	t.Logf("insts %d litrefs %d lits %d states %d dense %d nclass %d always %d", insts, nl, len(s.lits), s.ac.states(), s.ac.ndense, s.ac.nclass, len(s.always))
}
