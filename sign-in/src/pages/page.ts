/** What every page gets: `finish` ends the interaction, or turns the page to the step it owes (a second factor, a missing profile field). */
export type PageProps = { finish: () => Promise<void> };
