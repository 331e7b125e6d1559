/* clang-format off */
/* sopra-evalfit --games 8000 --seed 900000: 24000 games, 213421 states */
        -9.4862, /* bias */
        0.264455, /* morale */
        -0.925299, /* starvation tokens x phases */
        -0.462682, /* short of food now x phases */
        -0.107136, /* food lacking later */
        -0.188154, /* waste / 10 */
        -0.012134, /* waste */
        -0.251587, /* deaths next colony phase */
        -0.0947383, /* deaths the one after */
        0.113182, /* crisis outlook */
        -0.0207811, /* crises to come covered */
        1.11083, /* characters alive */
        -0.09947, /* characters alive x phases */
        -0.374049, /* characters doomed */
        0.113597, /* cards held */
        0.60324, /* colony phases ahead */
