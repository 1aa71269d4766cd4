/*
 * The served page's bundle (app/page/bundle.py): every drawn component's module, by its
 * Python class's name, as Panel's compiled bundles export them (`panel compile`'s index):
 * Panel loads this one file, cached, for every component of every page.
 */
import * as SdpaChannel from "./channel.js";
import * as ClassBar from "./class_bar_component.js";
import * as DrawnControls from "./controls_component.js";
import * as DrawnFigures from "./figures_component.js";
import * as FirstScreen from "./first_screen_component.js";
import * as DrawnLesson from "./lesson_component.js";

// What tests and a curious student's console read: each session channel's state.
globalThis.SdpaChannel ??= { status: SdpaChannel.status };

export default { ClassBar, DrawnControls, DrawnFigures, DrawnLesson, FirstScreen };
