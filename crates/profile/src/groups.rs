//! A recording's event groups as a report shows them: perf's GROUP_DESC
//! feature, `--group` and `--no-group`, and the section names of group
//! view.

/// The recording's event groups (perf's GROUP_DESC) and whether the
/// report shows them together.
pub struct EventGroups {
    /// Each event's group leader (itself if it leads or is alone).
    pub leader: Vec<usize>,
    /// Group names by leader (None: anonymous).
    names: Vec<Option<String>>,
    /// Group view (perf's `--group`, on by default for recordings with
    /// groups).
    pub view: bool,
    /// `--group` or `--no-group` on a recording without groups: all events
    /// form one, named by its members only.
    forced: bool,
}

impl EventGroups {
    pub fn new(meta: &perf_data::Meta, group: bool, no_group: bool) -> Self {
        let n = meta.events.len();
        let mut leader: Vec<usize> = (0..n).collect();
        let mut names = vec![None; n];
        let descs = meta
            .features
            .get(perf_data::consts::feature::GROUP_DESC)
            .and_then(|b| perf_data::features::parse_group_desc(b, meta.endian).ok())
            .unwrap_or_default();
        // As perf rebuilds them: a leader's index, then its members after it.
        for d in &descs {
            let l = d.leader_idx as usize;
            let end = l.saturating_add(d.nr_members as usize).min(n);
            if l >= n || d.nr_members < 2 {
                continue;
            }
            for m in leader.iter_mut().take(end).skip(l) {
                *m = l;
            }
            if d.name != "{anon_group}" {
                names[l] = Some(d.name.clone());
            }
        }
        let has_groups = leader.iter().enumerate().any(|(i, &l)| l != i);
        // perf's --group and --no-group alike make all events of a
        // recording without groups one group (its headers then say
        // "events" for the first), only --group shows it as one.
        let forced = (group || no_group) && !has_groups && n > 1;
        if forced {
            leader.iter_mut().for_each(|l| *l = 0);
        }
        EventGroups {
            leader,
            names,
            view: !no_group && (group || has_groups),
            forced,
        }
    }

    /// The events that head a report section: every event, or in group
    /// view every group's leader, whose rows are linked with its members'
    /// (perf's hists__link) so that each row shows every member's share.
    pub fn sections(&self, report: &mut crate::hist::Report) -> Vec<usize> {
        let mut out = Vec::new();
        for ev in 0..self.leader.len() {
            if self.view && self.leader[ev] != ev {
                continue;
            }
            out.push(ev);
            if self.view {
                let members = self.members(ev);
                if !members.is_empty() {
                    report.link_group(ev, &members);
                }
            }
        }
        out
    }

    /// Whether `ev` leads its group (an event alone leads itself).
    pub fn leads(&self, ev: usize) -> bool {
        self.leader.get(ev) == Some(&ev)
    }

    /// The name a group was given (`-e 'name{a,b}'`), if any.
    pub fn group_name(&self, ev: usize) -> Option<String> {
        self.names.get(ev).cloned().flatten()
    }

    /// Whether any event is in a group of several (perf's `nr_groups` > 0).
    pub fn any(&self) -> bool {
        self.leader.iter().enumerate().any(|(i, &l)| l != i)
    }

    /// The other members of the group `ev` leads.
    pub fn members(&self, ev: usize) -> Vec<usize> {
        (0..self.leader.len())
            .filter(|&m| m != ev && self.leader[m] == ev)
            .collect()
    }

    /// The section header's name: the event's, or in group view the
    /// group's (perf's `evsel__group_desc`).
    pub fn section_name(&self, meta: &perf_data::Meta, ev: usize) -> String {
        let name = |i: usize| meta.events.get(i).map(|e| e.name()).unwrap_or_default();
        let members = self.members(ev);
        if !self.view || members.is_empty() {
            return name(ev);
        }
        let list = std::iter::once(ev)
            .chain(members)
            .map(name)
            .collect::<Vec<_>>()
            .join(", ");
        if self.forced {
            list
        } else {
            let group = self.names[ev].as_deref().unwrap_or("anon group");
            format!("{group} {{ {list} }}")
        }
    }
}
